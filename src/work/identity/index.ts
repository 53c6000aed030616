import { actorQueryTool, registerActorTool, whoamiTool } from "./model";
import { guideTool } from "./guide";

export const identityTools = [whoamiTool, registerActorTool, actorQueryTool, guideTool];
