import type { AnyToolDef } from "../../mcp/define-tool";

export const diffTools: AnyToolDef[] = [];
