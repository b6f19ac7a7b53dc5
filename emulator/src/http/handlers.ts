import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { Context } from "../context";
import { ApiError, internal, invalid } from "../errors";
import { MEDIA_TYPES, pathOf } from "./paths";

function asApiError(error: FastifyError): ApiError {
  if (error instanceof ApiError) return error;
  if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
    return invalid(
      [{ field: "content-type", message: `must be ${MEDIA_TYPES.json} (${MEDIA_TYPES.form} for /auth/token)` }],
      "Unsupported content type.",
      415,
    );
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return invalid([{ field: "body", message: error.message }], error.message, status);
  return internal("The emulator failed unexpectedly; see its log.");
}

/** Every error answers in the profile's error envelope; unexpected ones are logged. */
export function errorHandler(ctx: Context) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const apiError = asApiError(error);
    if (!(error instanceof ApiError) && apiError.status >= 500) request.log.error({ err: error }, "unexpected error");
    return reply
      .code(apiError.status)
      .headers(apiError.headers)
      .send(ctx.profile.errorBody(apiError, String(request.id)));
  };
}

/** An unknown route is a 404 of resource type "Route", in the profile's error envelope. */
export function notFoundHandler(ctx: Context) {
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const route = `${request.method} ${pathOf(request)}`;
    const error = new ApiError(404, "ResourceNotFound", `No route ${route}.`, {
      resourceType: "Route",
      resourceId: route,
    });
    return reply.code(404).send(ctx.profile.errorBody(error, String(request.id)));
  };
}
