import type { AnyToolDef } from "../../mcp/define-tool";

export const reactiveTools: AnyToolDef[] = [];
