import type OpenAI from "openai";

/** Chat Completions messages, as the openai SDK types them. */
export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type ChatTool = OpenAI.Chat.Completions.ChatCompletionTool;

export interface ModelRequest {
  messages: ChatMessage[];
  tools?: ChatTool[];
  /** Ask for a JSON object answer (`response_format: {type: "json_object"}`). */
  json?: boolean;
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface ModelToolCall {
  id: string;
  name: string;
  /** Raw JSON text as the model produced it (may be invalid). */
  arguments: string;
}

export interface ModelResponse {
  /** Text content; null or "" when the model said nothing. */
  content: string | null;
  toolCalls: ModelToolCall[];
  finishReason: string | null;
  usage: { promptTokens: number; completionTokens: number } | null;
}

/**
 * The model port. The OpenAI adapter retries 429 and 5xx with backoff and applies a timeout;
 * it throws ModelError (code MODEL_ERROR) when the request finally fails.
 */
export interface ModelClient {
  readonly model: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}
