import { listApprovalsTool } from "./list";
import { requestApprovalTool } from "./request";
import { respondApprovalTool } from "./respond";

/** Plan approvals through the inbox (seed 004 "Other plan management tools"), in the order agents meet them. */
export const approvalsTools = [requestApprovalTool, respondApprovalTool, listApprovalsTool];
