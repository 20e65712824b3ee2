import { describe, expect, it } from "vitest";
import { signInKey } from "../../../web/api/sign-in-names.js";

describe("sign-in name keys", () => {
  it("fold case, accents, compatibility forms, stroked letters and spaces", () => {
    const same = [
      ["Zoë Müller", "zoe muller"],
      ["  Zoë\t Müller ", "ZOE MULLER"],
      ["Zoe\u0308", "zoë"],
      ["Straße", "STRASSE"],
      ["Søren Kierkegård", "soren kierkegard"],
      ["Łukasz", "lukasz"],
      ["Ｚｏｅ", "zoe"],
      ["ﬁona", "Fiona"],
      ["İlker", "ilker"],
    ];
    for (const [a, b] of same) expect(signInKey(a!), `${a} ~ ${b}`).toBe(signInKey(b!));
  });

  it("keeps different names apart", () => {
    for (const [a, b] of [["Ana", "Anna"], ["Zoë", "Zoë M."], ["李", "杨"], ["bo", "b o"]]) expect(signInKey(a!)).not.toBe(signInKey(b!));
  });
});
