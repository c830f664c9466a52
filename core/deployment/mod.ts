/** Issued but not deployed: issuances a watch recorded for a certificate's names, until every endpoint serves them. */
export {
  awaitsIssuance,
  deploymentCheckAt,
  deploymentDueAt,
  deploymentGrace,
  judgeDeployment,
  laggingEndpoints,
  leafNamesKey,
  namesKey,
  presentDeployment,
  supersedeDeployment,
  type DeploymentView,
  type NotDeployed,
} from "./pending.ts";
export { noteIssuances, type RecordedIssuance } from "./note_issuance.ts";
