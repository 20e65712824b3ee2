/**
 * The person's workspace: race-free file access inside one directory tree (the jail), the file
 * tools, received files from the messengers, and which of its files carry a taint. (Artifacts, the
 * files the person keeps, are sandbox/artifacts.)
 */
export { workspaceContextMedia, workspaceReceivedFiles } from "./inbox.js";
export { Workspace, workspaceTools, JailError, DEFAULT_QUOTA_BYTES, MAX_FILE_BYTES, type WorkspaceOptions } from "./tools.js";
export { FileTaints, type FileTaint } from "./file-taints.js";
