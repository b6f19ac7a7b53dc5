import type { FastifyRequest } from "fastify";

export const CONTROL_PREFIX = "/_emulator/";

export const MEDIA_TYPES = { json: "application/json", form: "application/x-www-form-urlencoded" } as const;

export function pathOf(request: FastifyRequest): string {
  return request.url.split("?")[0] ?? request.url;
}

export function mediaType(request: FastifyRequest): string {
  return (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}
