/** Text matched literally inside a LIKE pattern written with `ESCAPE '\'` (drizzle's like() has no ESCAPE). */
export const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
