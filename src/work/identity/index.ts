import { actorQueryTool } from "./query";
import { guideTool } from "./guide";
import { registerActorTool } from "./register";
import { whoamiTool } from "./whoami";

export const identityTools = [whoamiTool, registerActorTool, actorQueryTool, guideTool];
