/**
 * The composition root: the one place that picks adapters from the settings and wires core, the
 * messengers, the jobs, the sandbox, the connectors and the web server together. `startApp` starts
 * a process (main.ts calls it; tests call it in-process). Nothing here decides anything: each
 * behaviour lives in the room whose job it is.
 */
export { startApp, type RunningApp } from "./start.js";
export { Familiar } from "./familiar.js";
export type { FamiliarDeps } from "./core.js";
