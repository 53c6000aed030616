/** The work ledger's tool lists, one per room, for the catalog (the only importer of this file). */
export { identityTools } from "./identity";
export { projectTools } from "./projects";
export { taskTools } from "./tasks";
export { decisionTools } from "./decisions";
export { handoffTools } from "./handoffs";
export { knowledgeTools } from "./knowledge";
export { collabTools } from "./collab";
export { attachmentTools } from "./attachments";
export { repoTools } from "./repos";
export { feedbackTools } from "./feedback";
export { skillTools } from "./skills";
export { searchTools } from "./search";
export { runTools } from "./runs";
export { reservationTools } from "./reservations";
export { webhookTools } from "./outhooks";

// The seam plans hang on: the catalog registers plans' step follower with the tasks room.
export { onTaskStatusChange } from "./tasks/model";
// And the one that lets a task's reserved paths go with it.
export { followTaskReservations } from "./reservations/model";
// Whatever must happen when notices land (an inbox bell, an outgoing webhook) registers here.
export { onNoticesDelivered, type DeliveryCtx } from "./collab/inbox";
export { notificationQueryTool } from "./collab/notifications";
// And the one that hands new notices to the outgoing webhooks that cover their recipients.
export { kickOutboundHooks } from "./outhooks/dispatch";
