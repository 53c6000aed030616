import { activityLogTool, activityQueryTool } from "./activity";
import { commentAddTool, commentQueryTool } from "./comments";
import { notificationMarkReadTool, notificationQueryTool } from "./notifications";

export const collabTools = [commentAddTool, commentQueryTool, activityLogTool, activityQueryTool, notificationQueryTool, notificationMarkReadTool];
