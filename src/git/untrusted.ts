/**
 * Text that comes from GitHub (commit messages, file names, author names) is data written by
 * whoever pushed it. It is returned as data, cleaned of control characters and of invisible
 * characters that could hide instructions or spoof text (bidi overrides, zero-width marks).
 */

// C0/C1 controls except tab and newline; zero-width and bidi formatting characters; BOM.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/g;

export const cleanText = (text: string | null | undefined): string => (text ?? "").replace(UNSAFE, "");
