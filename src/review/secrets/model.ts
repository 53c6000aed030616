/** The secrets room's shared input: the text both scrub_secrets and validate_content scan. */
import { z } from "zod";

/** The reference's MAX_CONTENT_LENGTH for both tools. */
export const MAX_CONTENT = 1_000_000;
export const contentField = z.string().min(1).max(MAX_CONTENT).describe(`The text to scan (at most ${MAX_CONTENT} characters).`);
