import { activityLogTool, activityQueryTool, commentAddTool, commentQueryTool, notificationMarkReadTool, notificationQueryTool } from "./model";

export const collabTools = [commentAddTool, commentQueryTool, activityLogTool, activityQueryTool, notificationQueryTool, notificationMarkReadTool];
