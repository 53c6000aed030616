import { codeRefAddTool, codeRefQueryTool, codeRefUpdateTool, repoLinkTool, repoQueryTool, repoRegisterTool, taskCodeRefTool } from "./model";

export const repoTools = [repoRegisterTool, repoLinkTool, repoQueryTool, taskCodeRefTool, codeRefAddTool, codeRefUpdateTool, codeRefQueryTool];
