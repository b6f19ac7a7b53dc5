import { z } from "zod";

/** `POST /auth/token`, form encoded (OAuth 2.0 client credentials). */
export const TokenRequest = z.object({
  grant_type: z.literal("client_credentials"),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
});
export type TokenRequest = z.infer<typeof TokenRequest>;

export const TokenResponse = z.object({
  access_token: z.string().min(1),
  token_type: z.string().refine((value) => value.toLowerCase() === "bearer", { message: "must be Bearer" }),
  expires_in: z.number().positive(),
});
export type TokenResponse = z.infer<typeof TokenResponse>;
