/**
 * The store's secret boundary: a view of a {@link Store} whose writes of error texts and audit rows
 * pass through a scrubber first (core/log/redaction.ts `SecretRegistry.scrubDeep`: configured bot tokens and API
 * keys, every vault value in every encoding, token shapes). Covered: `audit.appendAudit` (summary and
 * data), `journal.recordIntent` and `journal.recordOutcome` (arguments, results and errors),
 * `tasks.transitionTask` (a failed task's error), `outbox.markDeliveryFailed`, `outbox.routeOutbound` and
 * `outbox.rerouteOutbound` (the platform's error),
 * `persons.setIdentityUnreachable` (the reason) and `connections.setConnectionStatus` (the last error). Everything else passes through unchanged.
 */
import type { Store } from "./ports.js";

type Scrub = <T>(value: T) => T;

/** Wraps `store` so the writes listed in the module doc are scrubbed by `scrub`. */
export function scrubbingStore(store: Store, scrub: Scrub): Store {
  const wrappers: Partial<Record<keyof Store, Record<string, (original: (...args: never[]) => unknown) => (...args: never[]) => unknown>>> = {
    audit: { appendAudit: (f) => (input: never) => f(scrub<never>(input)) },
    journal: {
      recordIntent: (f) => (input: never) => f(scrub<never>(input)),
      recordOutcome: (f) => ((key: never, outcome: never, now: never) => f(key, scrub<never>(outcome), now)),
    },
    tasks: { transitionTask: (f) => (input: never) => f(scrub<never>(input)) },
    outbox: {
      markDeliveryFailed: (f) => (input: never) => f(scrub<never>(input)),
      routeOutbound: (f) => (input: never) => f(scrub<never>(input)),
      rerouteOutbound: (f) => (input: never) => f(scrub<never>(input)),
    },
    connections: { setConnectionStatus: (f) => ((id: never, status: never) => f(id, scrub<never>(status))) },
    persons: { setIdentityUnreachable: (f) => ((channel: never, account: never, reason: never, now: never) => f(channel, account, scrub<never>(reason), now)) },
  };
  const repos = new Map<string | symbol, unknown>();
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      const wrap = typeof prop === "string" ? wrappers[prop as keyof Store] : undefined;
      if (wrap === undefined || value === null || typeof value !== "object") return typeof value === "function" ? (value.bind(target) as unknown) : value;
      let repo = repos.get(prop);
      if (repo === undefined) {
        repo = new Proxy(value, {
          get(r, name, rr) {
            const member: unknown = Reflect.get(r, name, rr);
            if (typeof member !== "function") return member;
            const bound = member.bind(r) as (...args: never[]) => unknown;
            const w = typeof name === "string" ? wrap[name] : undefined;
            return w ? w(bound) : bound;
          },
        });
        repos.set(prop, repo);
      }
      return repo;
    },
  });
}
