import { changeImportTool } from "./change-import";
import { changeImportGitTool } from "./import-git";

export const importTools = [changeImportTool, changeImportGitTool];
