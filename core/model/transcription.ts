/** Audio to transcribe: the bytes and what the platform said about them. */
export interface TranscriptionInput {
  bytes: Buffer;
  /** A file name with an extension the service recognises the format by (e.g. `voice.ogg`). */
  fileName: string;
  mimeType: string | null;
}

/**
 * Speech to text. Throws `TranscriptionUnavailableError` when the service has no transcription at all
 * (so callers stop trying), any other error for a failure of this one request.
 */
export interface Transcriber {
  transcribe(input: TranscriptionInput): Promise<string>;
}

/** The endpoint has no transcription API (404/405/501) or does not know the transcription model. */
export class TranscriptionUnavailableError extends Error {
  readonly code = "MODEL_ERROR" as const;
  constructor(message: string) {
    super(message);
    this.name = "TranscriptionUnavailableError";
  }
}
