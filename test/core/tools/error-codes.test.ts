import { describe, expect, it } from "vitest";
import { isToolErrorCode } from "../../../core/tools/error-codes.js";

describe("tool error codes", () => {
  it("accepts the closed set and nothing else", () => {
    for (const code of ["invalid_json", "tool_threw", "denied", "egress_denied", "timeout", "secret_not_bound", "not_found", "page_changed", "in_the_past", "not_run"]) {
      expect(isToolErrorCode(code), code).toBe(true);
    }
    for (const value of ["TOOL_THREW", "DENIED", "", "toString", "__proto__", 3, null, undefined]) {
      expect(isToolErrorCode(value), String(value)).toBe(false);
    }
  });
});
