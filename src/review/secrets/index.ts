/** The secrets room: masking secrets in text and checking content before it is used. */
import type { AnyToolDef } from "../../core/define-tool";
import { scrubSecretsTool } from "./scrub";
import { validateContentTool } from "./validate";

export const secretsTools: AnyToolDef[] = [scrubSecretsTool, validateContentTool];
