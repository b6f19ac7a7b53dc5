import type { z } from "zod";
import { ErrorEnvelope } from "../api";
import { shortened } from "../cli/shown";
import { type CallContext, DmarcResponseError } from "./errors";
import type { WireResponse } from "./transport";

// Turns bytes from the wire into checked values. A body that is not what the
// wire schemas say becomes a DmarcResponseError naming what was wrong, never
// a crash deep inside a resource.

const MAX_LISTED_ISSUES = 5;

type Parsed = { ok: true; value: unknown } | { ok: false; problem: string };

function parseJson(response: WireResponse): Parsed {
  const text = response.body.toString("utf8");
  if (text.trim() === "") return { ok: false, problem: "an empty body where JSON was expected" };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, problem: describeNonJson(response, text) };
  }
}

function describeNonJson(response: WireResponse, text: string): string {
  const contentType = String(response.headers["content-type"] ?? "");
  if (/html/i.test(contentType) || /^\s*</.test(text)) {
    const title = /<title[^>]*>([^<]{0,200})<\/title>/i.exec(text)?.[1]?.trim();
    return title ? `an HTML page ("${shortened(title, 80)}") instead of JSON` : "an HTML page instead of JSON";
  }
  if (/json/i.test(contentType) || /^\s*[[{]/.test(text))
    return "JSON that is not complete (the answer may have been cut off)";
  return `a body that is not JSON (content-type ${contentType || "not given"})`;
}

function describeIssues(error: z.ZodError): string {
  const listed = error.issues
    .slice(0, MAX_LISTED_ISSUES)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "(whole answer)"}: ${issue.message}`);
  const more = error.issues.length - listed.length;
  return listed.join("; ") + (more > 0 ? `; and ${more} more` : "");
}

/** The body of a successful answer, checked against its schema. */
export function decodeBody<T extends z.ZodType>(context: CallContext, response: WireResponse, schema: T): z.output<T> {
  const parsed = parseJson(response);
  if (!parsed.ok) {
    throw new DmarcResponseError(
      context,
      response.status,
      parsed.problem,
      "check that baseUrl points at the service's API and not at a web page or proxy; if it does, run again.",
    );
  }
  const checked = schema.safeParse(parsed.value);
  if (!checked.success) {
    throw new DmarcResponseError(
      context,
      response.status,
      `a body that does not match the expected shape (${describeIssues(checked.error)})`,
      "the service's answer format differs from what this client knows; upgrade the provider, or report the call with the service's traceId.",
    );
  }
  return checked.data;
}

export interface ServiceError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
  traceId?: string;
  /** The answer had no body at all, as the description shows for several 404s. */
  emptyBody: boolean;
}

/**
 * The description's `ErrorResponse` names one field at fault as
 * `details.property`; the guides list `details.invalidFields`. Either way a
 * refusal lists the fields it names.
 */
function withInvalidFields(status: number, details: Record<string, unknown> | undefined) {
  if (details === undefined || (status !== 400 && status !== 422) || Array.isArray(details.invalidFields))
    return details;
  if (typeof details.property !== "string") return details;
  const message = typeof details.message === "string" ? details.message : "is not valid";
  return { ...details, invalidFields: [{ field: details.property, message }] };
}

/** What an error answer says, whatever its shape (either published envelope, an OAuth error, a proxy's page). */
export function decodeServiceError(response: WireResponse): ServiceError {
  if (response.body.toString("utf8").trim() === "") return { code: "", message: "", emptyBody: true };
  const parsed = parseJson(response);
  if (!parsed.ok) return { code: "", message: parsed.problem.replace(/ instead of JSON$/, ""), emptyBody: false };
  const envelope = ErrorEnvelope.safeParse(parsed.value);
  const body = (parsed.value ?? {}) as Record<string, unknown>;
  if (!envelope.success) return { code: "", message: "", emptyBody: false };
  const { error, message, details, traceId } = envelope.data;
  // OAuth token endpoints answer { error, error_description } instead.
  const description = typeof body.error_description === "string" ? body.error_description : undefined;
  const checkedDetails = withInvalidFields(response.status, details);
  return {
    code: error ?? "",
    message: message ?? description ?? (typeof details?.message === "string" ? details.message : ""),
    ...(checkedDetails === undefined ? {} : { details: checkedDetails }),
    ...(traceId === undefined ? {} : { traceId }),
    emptyBody: false,
  };
}
