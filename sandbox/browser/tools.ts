/**
 * The browser tools the model calls. Every page it reads is untrusted content (the activation is
 * tainted). Every action is described to Sentinel first (`describe.ts`) and, when it runs, checked
 * again: the page must still describe the same action (same digest), and at the network layer only
 * the approved write may leave (`network.ts`). The tools share `PageKit` (kit.ts); the page tools
 * are in page-tools.ts, the file tools in file-tools.ts, screenshots and PDFs in capture.ts.
 */
import type { ToolDefinition } from "../../core/tools/index.js";
import type { ArtifactSink } from "../artifacts/index.js";
import { captureTools } from "./capture.js";
import type { Scrub } from "./describe.js";
import { downloadTool, uploadTool } from "./file-tools.js";
import { PageKit } from "./kit.js";
import { clickTool, fillTool, openTool, readTool } from "./page-tools.js";
import type { BrowserRuntime } from "./runtime.js";

/** Settings of the browser tools. */
export interface BrowserToolOptions {
  runtime: BrowserRuntime;
  /** Where screenshots and downloads are recorded. */
  artifacts: ArtifactSink;
  /** DATA_DIR (workspace files for uploads). */
  dataDir: string;
  /** Known vault values → references (the vault's `scrub`). */
  scrub?: Scrub;
  /** Characters one page readout may hold (sized from the context budget). */
  maxReadChars?: number;
  /** Largest download, bytes (default 50 MiB). */
  maxDownloadBytes?: number;
}

/** The browser tools: open, read, click, type, select, screenshot, PDF, download, upload. */
export function browserTools(options: BrowserToolOptions): ToolDefinition[] {
  const kit = new PageKit(options.runtime, options);
  const [screenshot, pdf] = captureTools({ artifacts: options.artifacts, scrub: kit.scrub, inUse: kit.inUse, withPage: kit.withPage, requirePage: kit.requirePage });
  return [openTool(kit), readTool(kit), clickTool(kit), fillTool(kit, "browser_type"), fillTool(kit, "browser_select"), screenshot, pdf, downloadTool(kit, options), uploadTool(kit, options)];
}
