import { webhookDeliveriesTool } from "./deliveries";
import { webhookReplayTool } from "./replay";
import { webhookSubscribeTool } from "./subscribe";

export const webhookTools = [webhookSubscribeTool, webhookDeliveriesTool, webhookReplayTool];
