import type OpenAI from "openai";
import { ConfigError, ModelError, type ModelFailureReason } from "../errors.js";
import type { ModelClient, ModelRequest, ModelResponse, ModelToolCall } from "./port.js";

/**
 * Placeholder key sent to OpenAI-compatible servers when only a base URL is configured. Local servers
 * (llama.cpp, vLLM, Ollama, LM Studio) do not check it, but the SDK refuses to start without one.
 */
export const PLACEHOLDER_API_KEY = "familiar-local-no-key";

/** Settings of {@link OpenAIModelClient}. */
export interface OpenAIModelClientOptions {
  /** Model name, e.g. `gpt-4o-mini` or whatever the compatible server serves. */
  model: string;
  /** API key; may be omitted only when `baseURL` points at an OpenAI-compatible server. */
  apiKey?: string;
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:8080/v1`; absent means api.openai.com. */
  baseURL?: string;
  /** Timeout of one HTTP attempt, ms (default 60 000). A timed-out attempt is retried like a 5xx. */
  timeout?: number;
  /**
   * Retries after the first attempt (default 2). The openai SDK retries 408, 409, 429, 5xx and
   * connection errors/timeouts with exponential backoff (0.5 s doubling, max 8 s, up to 25 % jitter),
   * and waits exactly as long as `retry-after-ms` / `retry-after` (seconds or HTTP date) ask when
   * present. A server can force or forbid a retry with `x-should-retry: true|false`.
   */
  maxRetries?: number;
  /**
   * Name of the completion-length parameter. api.openai.com wants `max_completion_tokens` (reasoning
   * models reject `max_tokens`); many compatible servers only know `max_tokens`. Default: the former
   * without `baseURL`, the latter with one. Only sent when a request sets `maxTokens`.
   */
  tokenLimitParam?: "max_tokens" | "max_completion_tokens";
  /**
   * Where the settings came from, so failures point at the right place: `environment` (default)
   * names the variables (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL); `page` names the setup
   * page's fields, where the person typed them.
   */
  settingsFrom?: "environment" | "page";
}

/**
 * {@link ModelClient} over the Chat Completions API of OpenAI or any OpenAI-compatible server.
 *
 * Only fields the request asks for are sent (`tools` only when non-empty, `response_format` only for
 * `json: true`, temperature and token limit only when set), because compatible servers reject
 * parameters they do not know. Retries are the SDK's own (see {@link OpenAIModelClientOptions.maxRetries}).
 *
 * @throws ConfigError from the constructor when neither an API key nor a base URL is given.
 * @throws ModelError from `complete` when the request finally fails; its message never contains the key.
 * @example
 * const model = new OpenAIModelClient({ model: "gpt-4o-mini", apiKey: process.env.OPENAI_API_KEY });
 * const answer = await model.complete({ messages: [{ role: "user", content: "hi" }] });
 */
export class OpenAIModelClient implements ModelClient {
  readonly model: string;
  private readonly client: Promise<OpenAI>;
  private sdk: typeof OpenAI | null = null;
  private readonly secrets: string[];
  private readonly tokenLimitParam: "max_tokens" | "max_completion_tokens";
  private readonly settingsFrom: "environment" | "page";

  constructor(options: OpenAIModelClientOptions) {
    const apiKey = options.apiKey?.trim() || undefined;
    const baseURL = options.baseURL?.trim() || undefined;
    if (apiKey === undefined && baseURL === undefined) {
      throw new ConfigError("The model needs OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible server", [
        { key: "OPENAI_API_KEY", expected: "an API key (or set OPENAI_BASE_URL to a local compatible server)" },
      ]);
    }
    this.model = options.model;
    this.secrets = apiKey === undefined ? [] : [apiKey];
    this.settingsFrom = options.settingsFrom ?? "environment";
    this.tokenLimitParam = options.tokenLimitParam ?? (baseURL === undefined ? "max_completion_tokens" : "max_tokens");
    // The SDK is loaded on the first request, so a process that never talks to a model never pays for it.
    this.client = import("openai").then(({ default: SDK }) => {
      this.sdk = SDK;
      return new SDK({
        apiKey: apiKey ?? PLACEHOLDER_API_KEY,
        // Passed explicitly so an OPENAI_BASE_URL in the process environment never overrides the setting.
        baseURL: baseURL ?? "https://api.openai.com/v1",
        timeout: options.timeout ?? 60_000,
        maxRetries: options.maxRetries ?? 2,
      });
    });
    // Never an unhandled rejection before the first request; the first request reports a failure.
    this.client.catch(() => undefined);
  }

  /** Sends one Chat Completions request (non-streaming) and returns the first choice. */
  async complete(request: ModelRequest): Promise<ModelResponse> {
    const body: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = {
      model: this.model,
      messages: request.messages,
    };
    if (request.tools !== undefined && request.tools.length > 0) body.tools = request.tools;
    if (request.json === true) body.response_format = { type: "json_object" };
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.maxTokens !== undefined) body[this.tokenLimitParam] = request.maxTokens;

    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await (await this.client).chat.completions.create(body, { signal: request.signal });
    } catch (error) {
      throw this.toModelError(error);
    }
    return this.toResponse(completion);
  }

  private toResponse(completion: OpenAI.Chat.Completions.ChatCompletion): ModelResponse {
    // Compatible servers sometimes answer 200 with an error object or without choices.
    const choice = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
    if (choice === undefined || choice.message === undefined || choice.message === null) {
      throw new ModelError(
        `${this.model}: the model server answered without a choice; check that it speaks the Chat Completions API`,
        "invalid_response",
      );
    }
    const message = choice.message;
    const toolCalls: ModelToolCall[] = [];
    for (const call of message.tool_calls ?? []) {
      // Familiar only declares function tools; anything else (custom tools) is not ours to run.
      if (call.type !== "function") continue;
      toolCalls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments ?? "" });
    }
    const usage = completion.usage;
    return {
      // A refusal is the model's own words to the person, so it is the answer's text.
      content: message.content ?? message.refusal ?? null,
      toolCalls,
      finishReason: choice.finish_reason ?? null,
      usage: usage ? { promptTokens: usage.prompt_tokens ?? 0, completionTokens: usage.completion_tokens ?? 0 } : null,
    };
  }

  private toModelError(error: unknown): ModelError {
    const where = `${this.model}`;
    const OpenAI = this.sdk;
    if (!OpenAI) return new ModelError(`the openai SDK could not be loaded: ${String((error as Error)?.message ?? error)}`, "connection");
    if (error instanceof OpenAI.APIUserAbortError) {
      return new ModelError(`${where}: request aborted`, "aborted");
    }
    if (error instanceof OpenAI.APIConnectionTimeoutError) {
      return new ModelError(
        `${where}: no answer within the timeout after retries; the model server is slow or down (raise MODEL_TIMEOUT_MS if it is just slow)`,
        "timeout",
      );
    }
    if (error instanceof OpenAI.APIConnectionError) {
      return new ModelError(
        `${where}: cannot reach the model server (${this.scrub(error.message)}); ${this.settingsFrom === "page" ? "check the server address on the setup page" : "check OPENAI_BASE_URL"} and the network`,
        "connection",
      );
    }
    if (error instanceof OpenAI.APIError) {
      const status = typeof error.status === "number" ? error.status : null;
      const reason = reasonForStatus(status);
      const detail = this.scrub(error.message);
      return new ModelError(`${where}: ${detail}${adviceFor(reason, this.settingsFrom)}`, reason, status, error.requestID ?? null);
    }
    const text = error instanceof Error ? error.message : String(error);
    return new ModelError(`${where}: unexpected failure: ${this.scrub(text)}`, "invalid_response");
  }

  /** Removes the API key (and anything shaped like an OpenAI key or bearer token) from provider text. */
  private scrub(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join("[redacted]");
    return out.replace(/\bsk-[A-Za-z0-9_*\-]{6,}/g, "[redacted]").replace(/Bearer\s+\S+/gi, "Bearer [redacted]");
  }
}

function reasonForStatus(status: number | null): ModelFailureReason {
  if (status === 401 || status === 403) return "auth";
  if (status === 429) return "rate_limited";
  if (status === 408) return "timeout";
  if (status !== null && status >= 500) return "server";
  return "rejected";
}

function adviceFor(reason: ModelFailureReason, from: "environment" | "page"): string {
  const page = from === "page";
  switch (reason) {
    case "auth":
      return page ? " (the server refused the API key entered on this page; check it and try again)" : " (check OPENAI_API_KEY)";
    case "rate_limited":
      return " (rate limited after retries; try again later or check the account's quota)";
    case "server":
      return " (the model server kept failing after retries)";
    case "rejected":
      return page ? " (the request was rejected; check the model chosen on this page and that the server supports tools)" : " (the request was rejected; check OPENAI_MODEL and that the server supports tools)";
    default:
      return "";
  }
}
