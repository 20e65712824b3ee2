import type { ModelClient } from "./port.js";

/**
 * The model to use now: `client` while `setting` says a model is configured, else null (the setup
 * page can choose one while Familiar runs; the runtime asks at every activation).
 */
export class ModelInUse {
  constructor(
    private readonly client: ModelClient,
    private readonly setting: { readonly configured: boolean },
  ) {}

  /** The client, or null while no model is configured. */
  current = (): ModelClient | null => (this.setting.configured ? this.client : null);
}
