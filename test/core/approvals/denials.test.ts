/**
 * What a Deny covers (issue 18 item 4): the place of a destination. A retry to the same host written
 * another way — another port of a public address, the address inside IPv6, upper case, a trailing
 * dot, a sibling subdomain — is the same place; distinct services of the person's own machine or
 * network (loopback or private addresses on other ports) are not.
 */
import { describe, expect, it } from "vitest";
import { coveredPlace, placeOf } from "../../../core/approvals/denials.js";
import { urlTarget, type ActionDescriptor } from "../../../core/policy/descriptor.js";

const place = (url: string) => placeOf(urlTarget(new URL(url)));
const request = (method: string, url: string): ActionDescriptor => ({ v: 1, tool: "http_request", capability: "web.request", access: "write", method, targets: [urlTarget(new URL(url))], digest: "0".repeat(64) });

describe("the place a denial covers", () => {
  it("is the host of a public address whatever the port or the IPv6 form it is written in", () => {
    expect(place("http://93.184.216.34:8080/x")).toBe(place("http://93.184.216.34/y"));
    expect(place("https://[::ffff:93.184.216.34]:9443/")).toBe(place("http://93.184.216.34/"));
    expect(place("http://[2001:4860:4860::8888]:81/")).toBe(place("http://[2001:4860:4860:0::8888]/"));
    expect(place("http://8.8.8.8:53/")).toBe("8.8.8.8");
  });

  it("is the registrable domain of a host name, written any way", () => {
    expect(place("http://A.Evil.Example:8080/")).toBe("evil.example");
    expect(place("http://b.evil.example./x")).toBe("evil.example");
  });

  it("keeps the port for loopback and private addresses (the person's own services are distinct)", () => {
    expect(place("http://127.0.0.1:8123/")).toBe("127.0.0.1:8123");
    expect(place("http://127.0.0.1:8123/")).not.toBe(place("http://127.0.0.1:3000/"));
    expect(place("http://[::ffff:127.0.0.1]:8123/")).toBe("127.0.0.1:8123");
    expect(place("http://192.168.1.10:80/")).toBe("192.168.1.10:80");
  });

  it("makes a denied POST to a public address cover a POST to another port of it", () => {
    const denied = request("POST", "http://93.184.216.34/collect");
    const retry = request("PUT", "http://[::ffff:5db8:d822]:8443/other?d=1");
    expect(coveredPlace(denied, retry)).toBe("93.184.216.34");
  });
});
