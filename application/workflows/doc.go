// Package workflows holds the use cases of workflows: their settings, integrations, the run log,
// notifications and the run engine that carries out their actions.
package workflows
