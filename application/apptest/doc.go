// Package apptest holds what the application's tests share: in-memory fakes of the ports and
// harnesses that wire one application to them. The repository fakes pass the same contracts
// as the persistence adapters (ports/porttest); repositories hand out copies, and Update
// stores change's result only when change succeeds, as a transaction would.
package apptest
