import type OpenAI from "openai";
import { PLACEHOLDER_API_KEY } from "./openai.js";
import { TranscriptionUnavailableError, type Transcriber, type TranscriptionInput } from "./transcription.js";

/** Settings of {@link OpenAITranscriber}; the same endpoint and key as the chat model. */
export interface OpenAITranscriberOptions {
  /** Transcription model, e.g. `whisper-1` or `gpt-4o-mini-transcribe` (OPENAI_TRANSCRIPTION_MODEL). */
  model: string;
  apiKey?: string;
  /** Base URL including `/v1`; absent means api.openai.com. */
  baseURL?: string;
  /** Timeout of one HTTP attempt, ms (default 60,000). */
  timeout?: number;
  /** The SDK's retries of 408/409/429/5xx and connection errors (default 2). */
  maxRetries?: number;
}

/** HTTP statuses meaning "this endpoint has no transcription" (no route, method not allowed, not implemented). */
const UNAVAILABLE_STATUSES = new Set([404, 405, 501]);

/**
 * {@link Transcriber} over `POST /audio/transcriptions` of OpenAI or a compatible server (the openai
 * SDK's `audio.transcriptions.create`, multipart upload). Answers the plain transcript text.
 *
 * @throws TranscriptionUnavailableError when the endpoint answers 404/405/501 or says the model does
 *   not exist (`model_not_found`): the service has no speech-to-text.
 * @throws Error for any other failure of the request (after the SDK's retries); the message never
 *   contains the API key.
 */
export class OpenAITranscriber implements Transcriber {
  private readonly client: Promise<{ sdk: typeof OpenAI; client: OpenAI }>;
  private readonly secrets: string[];

  constructor(private readonly options: OpenAITranscriberOptions) {
    const apiKey = options.apiKey?.trim() || undefined;
    this.secrets = apiKey ? [apiKey] : [];
    this.client = import("openai").then(({ default: SDK }) => ({
      sdk: SDK,
      client: new SDK({
        apiKey: apiKey ?? PLACEHOLDER_API_KEY,
        baseURL: options.baseURL?.trim() || "https://api.openai.com/v1",
        timeout: options.timeout ?? 60_000,
        maxRetries: options.maxRetries ?? 2,
      }),
    }));
    this.client.catch(() => undefined);
  }

  async transcribe(input: TranscriptionInput): Promise<string> {
    const { sdk, client } = await this.client;
    const { toFile } = await import("openai");
    try {
      const file = await toFile(input.bytes, input.fileName, input.mimeType ? { type: input.mimeType } : undefined);
      const result = await client.audio.transcriptions.create({ file, model: this.options.model, response_format: "json" });
      return (result.text ?? "").trim();
    } catch (error) {
      if (error instanceof sdk.APIError) {
        const status = typeof error.status === "number" ? error.status : null;
        const code = typeof error.code === "string" ? error.code : null;
        if ((status !== null && UNAVAILABLE_STATUSES.has(status)) || code === "model_not_found") {
          throw new TranscriptionUnavailableError(`transcription is not available at this endpoint (${status ?? code}): ${this.scrub(error.message)}`);
        }
        throw new Error(`transcription failed (${status ?? "no status"}): ${this.scrub(error.message)}`);
      }
      throw new Error(`transcription failed: ${this.scrub(error instanceof Error ? error.message : String(error))}`);
    }
  }

  private scrub(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join("[redacted]");
    return out.replace(/\bsk-[A-Za-z0-9_*-]{6,}/g, "[redacted]").slice(0, 300);
  }
}

/** An OpenAI-compatible endpoint: base URL (absent: api.openai.com), API key, chat model. */
export interface ModelEndpoint {
  baseURL?: string;
  apiKey?: string;
  model: string;
}

/**
 * The transcriber of the endpoint in use now: the model can be switched while Familiar runs, so the
 * transcriber (the same endpoint and key, `model` for speech) is made again whenever the endpoint
 * changes. Null while there is no endpoint, or when transcription is off.
 */
export class EndpointTranscriber {
  private made: { key: string; client: OpenAITranscriber } | null = null;

  constructor(private readonly options: { model: string; timeout: number; endpoint: () => ModelEndpoint | null; enabled: boolean }) {}

  /** The transcriber for the current endpoint, or null. */
  current = (): OpenAITranscriber | null => {
    const e = this.options.endpoint();
    if (!e || !this.options.enabled) return null;
    const key = `${e.baseURL ?? ""}|${e.apiKey ?? ""}`;
    if (this.made?.key !== key) {
      const client = new OpenAITranscriber({ model: this.options.model, ...(e.apiKey && { apiKey: e.apiKey }), ...(e.baseURL && { baseURL: e.baseURL }), timeout: this.options.timeout });
      this.made = { key, client };
    }
    return this.made.client;
  };
}
