// The partner's catalogue of plans
catalogue = invoke("dmarc:index:getPlans", {})

output firstPlan {
  value = catalogue.plans[0].name
}
