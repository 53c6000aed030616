import { codeRefAddTool, taskCodeRefTool } from "./code-ref-add";
import { codeRefQueryTool } from "./code-ref-query";
import { codeRefUpdateTool } from "./code-ref-update";
import { repoLinkTool } from "./link";
import { repoQueryTool } from "./query";
import { repoRegisterTool } from "./register";

export const repoTools = [repoRegisterTool, repoLinkTool, repoQueryTool, taskCodeRefTool, codeRefAddTool, codeRefUpdateTool, codeRefQueryTool];
