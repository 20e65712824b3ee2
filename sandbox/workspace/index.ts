/**
 * The person's workspace: race-free file access inside one directory tree (the jail), the file
 * tools, received files from the messengers, and artifacts — files Familiar made or downloaded that
 * the person keeps.
 */
export { WorkspaceArtifacts, artifactTools, type ArtifactSink, type ArtifactSource } from "./artifacts.js";
export { workspaceContextMedia, workspaceReceivedFiles } from "./inbox.js";
export { Workspace, workspaceTools } from "./tools.js";
