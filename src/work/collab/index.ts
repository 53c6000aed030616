import { activityLogTool, activityQueryTool } from "./activity";
import { commentAddTool, commentQueryTool } from "./comments";
import { notificationMarkReadTool, notificationQueryTool } from "./notifications";
import { overseerMessageTool } from "./overseer";

export const collabTools = [commentAddTool, commentQueryTool, activityLogTool, activityQueryTool, notificationQueryTool, notificationMarkReadTool, overseerMessageTool];
