/**
 * The browser: one Chromium shared by every person, one persistent context per person, every
 * request through the egress proxy, every action described to Sentinel before it runs, and the
 * browser tools the model calls.
 */
export { BrowserRuntime } from "./runtime.js";
export { browserTools } from "./tools.js";
