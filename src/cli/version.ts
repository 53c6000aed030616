/** Stamped by the bundle (scripts/build-cli.ts); a clone run from source reports "dev". */
declare const __CLI_VERSION__: string | undefined;
export const CLI_VERSION = typeof __CLI_VERSION__ === "string" ? __CLI_VERSION__ : "dev";
