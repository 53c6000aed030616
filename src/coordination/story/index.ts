/** The story room: where a piece of work came from and what came of it (provenance, the pull request story). */
import { provenanceTool } from "./provenance-tool";

export const storyTools = [provenanceTool];
