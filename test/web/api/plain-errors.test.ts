import { describe, expect, it } from "vitest";
import { z } from "zod";
import { localNameSchema, LOCAL_NAME_MAX } from "../../../web/api/auth.js";
import { plainErrors } from "../../../web/api/plain-errors.js";

const errorOf = (schema: z.ZodType, input: unknown): string => {
  const r = schema.safeParse(input);
  if (r.success) throw new Error(`accepted ${JSON.stringify(input)}`);
  return plainErrors(r.error);
};

describe("plain error sentences for people", () => {
  it("uses a schema's own sentences, and never a library default or a field path", () => {
    const schema = z.object({ displayName: z.string().trim().min(1, "Please enter a name."), n: z.number() });
    expect(errorOf(schema, { displayName: " ", n: 1 })).toBe("Please enter a name.");
    const other = errorOf(schema, { displayName: "a", n: "x" });
    expect(other).toBe("Something in the request was not valid (n).");
    expect(other).not.toMatch(/expected|Too small|Invalid input/);
  });
});

describe("the sign-in name", () => {
  it("accepts Unicode letters, accents, digits, spaces and . _ @ - up to the limit, whole", () => {
    for (const name of ["ana", "Ana María", "José Ñúñez", "Zoë O.", "李小龙", "Ærøskøbing_2", "a@b-c", "x".repeat(LOCAL_NAME_MAX)]) {
      expect(localNameSchema.parse(name)).toBe(name);
    }
    expect(localNameSchema.parse("  Ana   María ")).toBe("Ana María");
    // NFD input (a + combining accent) is kept as one letter.
    expect(localNameSchema.parse("Jose\u0301")).toBe("José");
  });

  it("refuses with a sentence: empty, too long (with its length), or other signs — never cut", () => {
    expect(errorOf(localNameSchema, "   ")).toBe("Please enter your name.");
    expect(errorOf(localNameSchema, "y".repeat(LOCAL_NAME_MAX + 6))).toBe(`A name can be at most ${LOCAL_NAME_MAX} characters; this one has ${LOCAL_NAME_MAX + 6}.`);
    for (const bad of ["<script>", "a/b", "semi;colon", "tab\u0000"]) expect(errorOf(localNameSchema, bad)).toBe("A name can have letters, digits, spaces and . _ @ - only.");
  });
});
