import { z } from "zod";
import { listOf, Timestamp } from "./common";

export const ORGANIZATION_NAME_MAX = 128;

export const OrganizationName = z
  .string()
  .min(1, { message: "must not be empty" })
  .max(ORGANIZATION_NAME_MAX, { message: `must be at most ${ORGANIZATION_NAME_MAX} characters` });

export const CreateOrganizationRequest = z.object({ name: OrganizationName });
export type CreateOrganizationRequest = z.infer<typeof CreateOrganizationRequest>;

export const UpdateOrganizationRequest = z.object({ name: OrganizationName });
export type UpdateOrganizationRequest = z.infer<typeof UpdateOrganizationRequest>;

export const Organization = z.object({
  id: z.string().min(1),
  name: z.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Organization = z.infer<typeof Organization>;

export const OrganizationList = listOf(Organization);
