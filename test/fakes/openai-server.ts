/**
 * A scripted fake of an OpenAI-compatible Chat Completions server, for tests that drive the real
 * openai SDK over real HTTP. It listens on 127.0.0.1 on a random port, records every request, and
 * answers from a queue of scripted responses (then from a default).
 *
 * @example
 * const server = await startFakeOpenAI();
 * server.push(toolCall("get_weather", { city: "Oslo" }), text("It is sunny."));
 * const model = new OpenAIModelClient({ model: "fake", baseURL: server.url });
 * // … run the code under test …
 * expect(server.requests[1]?.messages.at(-1)).toMatchObject({ role: "tool" });
 * await server.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type OpenAI from "openai";
import { judgeSystemPrefix } from "../../core/notify/judge.js";

type ChatRequestBody = OpenAI.Chat.Completions.ChatCompletionCreateParams;
type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** One scripted answer. Build them with {@link text}, {@link toolCall}, {@link httpError}, … */
export type FakeResponse =
  /** A plain answer; `content: null` or `""` scripts an empty answer (field bug M1). */
  | { kind: "text"; content: string | null; finishReason?: string; usage?: FakeUsage }
  /** Tool calls; `arguments` is the raw string the "model" produced, so invalid JSON can be scripted. */
  | { kind: "tool_calls"; calls: FakeToolCall[]; content?: string | null; usage?: FakeUsage }
  /** An HTTP error with an OpenAI-style error body; `retryAfter` becomes the `retry-after` header. */
  | { kind: "http_error"; status: number; message?: string; retryAfter?: number | string; headers?: Record<string, string> }
  /** Never answer (until the client gives up or the server closes): for timeout tests. */
  | { kind: "hang" }
  /** Any status and JSON body, for malformed-server tests. */
  | { kind: "raw"; status: number; body: unknown };

/** A tool call to script; `id` defaults to a unique `call_<n>`. */
export interface FakeToolCall {
  name: string;
  arguments: string;
  id?: string;
}

/** Token counts to report; by default about one token per four characters. */
export interface FakeUsage {
  promptTokens: number;
  completionTokens: number;
}

/** A queue entry: a fixed response, or a function of the request for dynamic behaviour. */
export type FakeScriptItem = FakeResponse | ((request: RecordedRequest) => FakeResponse | Promise<FakeResponse>);

/** A request as the fake received it, with helpers for common assertions. */
export interface RecordedRequest {
  /** The parsed JSON body, exactly as sent (null when the body was not JSON). */
  body: ChatRequestBody;
  /** Lower-cased request headers. */
  headers: Record<string, string | string[] | undefined>;
  /** `body.messages` (empty when absent). */
  messages: ChatMessage[];
  /** Names of the function tools offered in this request. */
  toolNames: string[];
  /** Text of the last user message (text parts joined), or null when there is none. */
  lastUserText: string | null;
  /** All message text (contents and tool-call arguments) joined by newlines, e.g. to count tokens. */
  promptText: string;
}

/** Settings of {@link startFakeOpenAI}. */
export interface FakeOpenAIOptions {
  /** Answer used when the queue is empty (default: {@link echo}). */
  fallback?: FakeScriptItem;
  /** Model id reported by `GET /v1/models` (default `fake-model`). */
  model?: string;
  /**
   * When set, requests must carry `Authorization: Bearer <apiKey>`; others get a 401 whose message
   * echoes the key they sent, as api.openai.com does, so tests can check that keys never leak.
   */
  apiKey?: string;
  /**
   * Serves `POST /v1/audio/transcriptions` (multipart, as the SDK uploads): the answer is the
   * transcript, or an HTTP error. Without it the route does not exist (404), like servers that have
   * no speech-to-text.
   */
  transcribe?: (upload: TranscriptionUpload) => string | { status: number; message: string } | Promise<string | { status: number; message: string }>;
  /**
   * Answers the notification judge (requests whose system prompt starts with `judgeSystemPrefix`;
   * core/notify/judge.ts), which the app asks whenever a model is configured. Judge requests never
   * take from the queue or the fallback and are recorded in `judgeRequests`, not `requests`. Default:
   * `{"decision":"send"}` — no objection, so the rules decide.
   */
  judge?: FakeScriptItem;
}

/** One upload to `/v1/audio/transcriptions`. */
export interface TranscriptionUpload {
  model: string;
  fileName: string;
  mimeType: string;
  bytes: Buffer;
}

/** A running fake server. */
export interface FakeOpenAIServer {
  /** Base URL including `/v1`, for the SDK's `baseURL`. */
  url: string;
  /** Every `POST /v1/chat/completions` received, in order (including ones answered with errors). */
  requests: RecordedRequest[];
  /** Every request of the notification judge, in order (see `FakeOpenAIOptions.judge`). */
  judgeRequests: RecordedRequest[];
  /** Every `POST /v1/audio/transcriptions` received, in order (only when `transcribe` is set). */
  transcriptions: TranscriptionUpload[];
  /** Appends scripted answers to the queue. */
  push(...items: FakeScriptItem[]): void;
  /** Scripted answers not used yet. */
  readonly pending: number;
  /** Stops the server, ending any hanging request. */
  close(): Promise<void>;
}

/** A text answer (`null` or `""` for an empty one). */
export function text(content: string | null, extra: { finishReason?: string; usage?: FakeUsage } = {}): FakeResponse {
  return { kind: "text", content, ...extra };
}

/**
 * One tool call. An object `args` is JSON-encoded; a string is sent as-is (script invalid JSON this way).
 */
export function toolCall(name: string, args: string | Record<string, unknown>, id?: string): FakeResponse {
  return toolCalls([{ name, args, id }]);
}

/** Several tool calls in one assistant message, optionally with text alongside. */
export function toolCalls(
  calls: { name: string; args: string | Record<string, unknown>; id?: string }[],
  content: string | null = null,
): FakeResponse {
  return {
    kind: "tool_calls",
    content,
    calls: calls.map((c) => ({
      name: c.name,
      arguments: typeof c.args === "string" ? c.args : JSON.stringify(c.args),
      ...(c.id === undefined ? {} : { id: c.id }),
    })),
  };
}

/** An HTTP error, e.g. `httpError(429, { retryAfter: 0 })` or `httpError(500)`. */
export function httpError(
  status: number,
  options: { message?: string; retryAfter?: number | string; headers?: Record<string, string> } = {},
): FakeResponse {
  return { kind: "http_error", status, ...options };
}

/** A request that never gets an answer (the client's timeout decides). */
export function hang(): FakeResponse {
  return { kind: "hang" };
}

/** Default fallback: answers `echo: <last user message>`. */
export const echo: FakeScriptItem = (request) => text(`echo: ${request.lastUserText ?? ""}`);

/** Starts a fake on 127.0.0.1 with a random free port. Close it in `afterEach`/`afterAll`. */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAIServer> {
  const queue: FakeScriptItem[] = [];
  const requests: RecordedRequest[] = [];
  const judgeRequests: RecordedRequest[] = [];
  const transcriptions: TranscriptionUpload[] = [];
  const fallback = options.fallback ?? echo;
  const model = options.model ?? "fake-model";
  let callCounter = 0;
  let completionCounter = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody(`fake server failure: ${String(error)}`, "server_error"));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/v1/models") {
      sendJson(res, 200, { object: "list", data: [{ id: model, object: "model", created: 0, owned_by: "familiar-fake" }] });
      return;
    }
    if (req.method === "POST" && path === "/v1/audio/transcriptions" && options.transcribe) {
      const form = await new Response(await readRaw(req), { headers: { "content-type": String(req.headers["content-type"] ?? "") } }).formData();
      const file = form.get("file");
      if (!(file instanceof Blob)) {
        sendJson(res, 400, errorBody("file is required", "invalid_request_error"));
        return;
      }
      const upload: TranscriptionUpload = {
        model: String(form.get("model") ?? ""),
        fileName: file instanceof File ? file.name : "",
        mimeType: file.type,
        bytes: Buffer.from(await file.arrayBuffer()),
      };
      transcriptions.push(upload);
      const answer = await options.transcribe(upload);
      if (typeof answer === "string") sendJson(res, 200, { text: answer });
      else sendJson(res, answer.status, errorBody(answer.message, "invalid_request_error"));
      return;
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      sendJson(res, 404, errorBody(`no route ${req.method} ${path}`, "invalid_request_error"));
      return;
    }
    const raw = await readBody(req);
    let body: ChatRequestBody;
    try {
      body = JSON.parse(raw) as ChatRequestBody;
    } catch {
      sendJson(res, 400, errorBody("request body is not JSON", "invalid_request_error"));
      return;
    }
    const recorded = record(body, req.headers);
    const system = body.messages?.[0];
    if (system?.role === "system" && typeof system.content === "string" && system.content.startsWith(judgeSystemPrefix)) {
      judgeRequests.push(recorded);
      const judged = options.judge ?? text(JSON.stringify({ decision: "send", reason: "fake judge: no objection" }));
      respond(res, typeof judged === "function" ? await judged(recorded) : judged, recorded, body.model);
      return;
    }
    requests.push(recorded);

    if (options.apiKey !== undefined) {
      const given = String(req.headers.authorization ?? "").replace(/^Bearer\s+/i, "");
      if (given !== options.apiKey) {
        sendJson(res, 401, errorBody(`Incorrect API key provided: ${given}.`, "invalid_request_error", "invalid_api_key"));
        return;
      }
    }
    if (body.stream === true) {
      sendJson(res, 400, errorBody("the fake server does not stream", "invalid_request_error"));
      return;
    }
    const item = queue.shift() ?? fallback;
    const response = typeof item === "function" ? await item(recorded) : item;
    respond(res, response, recorded, body.model);
  }

  function respond(res: ServerResponse, response: FakeResponse, request: RecordedRequest, requestModel: string): void {
    switch (response.kind) {
      case "hang":
        return; // the socket stays open until the client aborts or close() ends it
      case "raw":
        sendJson(res, response.status, response.body);
        return;
      case "http_error": {
        const headers: Record<string, string> = { ...response.headers };
        if (response.retryAfter !== undefined) headers["retry-after"] = String(response.retryAfter);
        const type = response.status === 429 ? "rate_limit_exceeded" : response.status >= 500 ? "server_error" : "invalid_request_error";
        sendJson(res, response.status, errorBody(response.message ?? `scripted ${response.status}`, type), headers);
        return;
      }
      case "text":
      case "tool_calls": {
        const calls = response.kind === "tool_calls" ? response.calls : [];
        const content = response.content ?? null;
        const message: Record<string, unknown> = { role: "assistant", content, refusal: null };
        if (calls.length > 0) {
          message.tool_calls = calls.map((c) => ({
            id: c.id ?? `call_${++callCounter}`,
            type: "function",
            function: { name: c.name, arguments: c.arguments },
          }));
        }
        const completionText = (content ?? "") + calls.map((c) => c.name + c.arguments).join("");
        const usage = response.usage ?? {
          promptTokens: approxTokens(request.promptText),
          completionTokens: approxTokens(completionText),
        };
        sendJson(res, 200, {
          id: `chatcmpl-fake-${++completionCounter}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: requestModel || model,
          choices: [
            {
              index: 0,
              message,
              logprobs: null,
              finish_reason: response.kind === "text" ? (response.finishReason ?? "stop") : "tool_calls",
            },
          ],
          usage: {
            prompt_tokens: usage.promptTokens,
            completion_tokens: usage.completionTokens,
            total_tokens: usage.promptTokens + usage.completionTokens,
          },
        });
        return;
      }
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    judgeRequests,
    transcriptions,
    push: (...items) => void queue.push(...items),
    get pending() {
      return queue.length;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function record(body: ChatRequestBody, headers: IncomingMessage["headers"]): RecordedRequest {
  const messages: ChatMessage[] = Array.isArray(body?.messages) ? body.messages : [];
  const toolNames = (body?.tools ?? []).flatMap((t) => (t.type === "function" ? [t.function.name] : []));
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const parts: string[] = [];
  for (const m of messages) {
    parts.push(contentText(m.content));
    if (m.role === "assistant") for (const c of m.tool_calls ?? []) if (c.type === "function") parts.push(c.function.arguments);
  }
  return {
    body,
    headers: { ...headers },
    messages,
    toolNames,
    lastUserText: lastUser === undefined ? null : contentText(lastUser.content),
    promptText: parts.filter((p) => p.length > 0).join("\n"),
  };
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((p: { type?: string; text?: string }) => (p.type === "text" && typeof p.text === "string" ? p.text : "")).join("");
  }
  return "";
}

function approxTokens(s: string): number {
  return Math.ceil(s.length / 4);
}

function errorBody(message: string, type: string, code: string | null = null): unknown {
  return { error: { message, type, param: null, code } };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload), ...headers });
  res.end(payload);
}

/** The `image_url` URLs of every user message of a request, in order. */
export function imageUrls(request: RecordedRequest): string[] {
  return request.messages.flatMap((m) =>
    m.role === "user" && Array.isArray(m.content) ? m.content.flatMap((p) => (p.type === "image_url" ? [p.image_url.url] : [])) : [],
  );
}

function readRaw(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
