import { type AssignSubscriptionRequest, type Plan, PlanList, Subscription, SubscriptionList } from "../../api";
import type { ListScope, ReadBatcher } from "../batching/coalescing";
import type { Requester } from "../requester";
import { segment, withQuery } from "./common";
import { subscriptionsOf } from "./listScopes";
import type { OrganizationCalls } from "./organizations";

// Subscriptions and the plans they are bought from: both are the partner's
// routes under /v1/partners, which the emulator's routes/subscriptions.ts serves.

export class SubscriptionCalls {
  constructor(
    private readonly requester: Requester,
    private readonly reads: ReadBatcher,
    private readonly organizations: OrganizationCalls,
  ) {}

  listPlans(): Promise<Plan[]> {
    return this.requester.call({
      operation: "list plans",
      method: "GET",
      path: "/v1/partners/plans",
      schema: PlanList,
      repeatable: true,
    });
  }

  assignSubscription(body: AssignSubscriptionRequest): Promise<Subscription> {
    return this.subscriptionWrite(subscriptionsOf(body.organizationId), {
      operation: "assign subscription",
      path: "/v1/partners/subscriptions/assign",
      json: body,
    });
  }

  /** The answer may carry a new subscription id: the service replaces the subscription. */
  changeSubscriptionPrice(id: string, priceId: string): Promise<Subscription> {
    return this.subscriptionWrite(this.reads.scopeOf("subscriptions", id), {
      operation: "change subscription price",
      path: `/v1/partners/subscriptions/${segment(id)}`,
      json: { priceId },
    });
  }

  renewSubscription(id: string): Promise<Subscription> {
    return this.subscriptionWrite(this.reads.scopeOf("subscriptions", id), {
      operation: "renew subscription",
      path: `/v1/partners/subscriptions/${segment(id)}/renew`,
    });
  }

  /**
   * A second cancel is refused (422) after a first one that took effect
   * unseen, so an unanswered cancel is reported as such and read back, not re-sent.
   */
  cancelSubscription(id: string): Promise<Subscription> {
    return this.subscriptionWrite(this.reads.scopeOf("subscriptions", id), {
      operation: "cancel subscription",
      path: `/v1/partners/subscriptions/${segment(id)}/cancel`,
    });
  }

  /** Every subscription call changes state and is not repeatable; the answer names the subscription now in force. */
  private async subscriptionWrite(
    scope: ListScope,
    call: { operation: string; path: string; json?: unknown },
  ): Promise<Subscription> {
    const subscription = await this.reads.write([scope], () =>
      this.requester.call({ ...call, method: "POST", schema: Subscription, repeatable: false }),
    );
    if (scope.owner !== undefined) this.reads.learnOwner("subscriptions", subscription.id, scope.owner);
    return subscription;
  }

  /** {@link listSubscriptions}, shared by every subscription read of the organisation on this client. */
  readSubscriptions(organizationId: string): Promise<Subscription[]> {
    return this.reads.list(subscriptionsOf(organizationId), {
      fetch: () => this.listSubscriptions(organizationId),
      keyOf: (subscription) => subscription.id,
    });
  }

  /** Cancelled and expired ones included. */
  async listSubscriptions(organizationId: string): Promise<Subscription[]> {
    const list = await this.organizations.scoped(
      organizationId,
      this.requester.call({
        operation: "list subscriptions",
        method: "GET",
        path: withQuery("/v1/partners/subscriptions", { organizationId }),
        schema: SubscriptionList,
        repeatable: true,
      }),
    );
    for (const subscription of list) this.reads.learnOwner("subscriptions", subscription.id, organizationId);
    return list;
  }
}
