import { z } from "zod";

/**
 * `POST /auth/token`, form encoded (OAuth 2.0 client credentials). The guides
 * send `grant_type`; the description requires only the client id and secret.
 */
export const TokenRequest = z.object({
  grant_type: z.literal("client_credentials").optional(),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
});
export type TokenRequest = z.infer<typeof TokenRequest>;

/** Extra fields (`refresh_expires_in`, `scope`, `not-before-policy`) are ignored: no refresh tokens are used. */
export const TokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z
    .string()
    .refine((value) => value.toLowerCase() === "bearer", { message: "must be Bearer" })
    .optional(),
  expires_in: z.number().positive(),
});
export type TokenResponse = z.infer<typeof TokenResponse>;
