import { ModelError } from "../errors.js";
import type { ModelClient, ModelRequest, ModelResponse } from "./port.js";

/**
 * A {@link ModelClient} that delegates every request to the client configured *now*, so a model set
 * up in the browser (or changed there) is used by the very next request without a restart. The
 * composition root builds one and hands it to the core in place of a fixed client.
 *
 * While nothing is configured, `configured` is false (the composition root then hands the runtime
 * no model, so it answers "no model configured") and `complete` throws ModelError `rejected`.
 *
 * @example
 * const model = new SwitchableModelClient(null);
 * model.use(new OpenAIModelClient({ model: "llama3", baseURL: "http://127.0.0.1:11434/v1" }));
 */
export class SwitchableModelClient implements ModelClient {
  private current: ModelClient | null;

  constructor(initial: ModelClient | null) {
    this.current = initial;
  }

  /** The current model's name ("" while none is configured). */
  get model(): string {
    return this.current?.model ?? "";
  }

  /** Whether a model is configured: false means the runtime should not call `complete`. */
  get configured(): boolean {
    return this.current !== null;
  }

  /** Switches to `client` (null: none) for every request from now on; requests in flight finish on the old one. */
  use(client: ModelClient | null): void {
    this.current = client;
  }

  /** Sends the request to the current client. @throws ModelError when none is configured, or whatever it throws. */
  complete(request: ModelRequest): Promise<ModelResponse> {
    const client = this.current;
    if (!client) return Promise.reject(new ModelError("no model is configured: open the setup page or set OPENAI_API_KEY / OPENAI_BASE_URL", "rejected"));
    return client.complete(request);
  }
}
