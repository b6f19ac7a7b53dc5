catalogue = invoke("dmarc:index:getPlans", {})

output firstPlan {
  value = catalogue.plans[0].name
}
