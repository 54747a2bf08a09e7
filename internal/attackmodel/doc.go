// Package attackmodel holds the statistical tests of the attack programs
// against the papers' formulas, millions of queries each: Proposition 2 of
// the perturbation finder, Eq. 5 of the noise remover, Table 1 of the IDP
// variance test. They answer through a model of the firewall cut to what
// they send (the planner's parser, the grouped stand-in backend, the
// mechanism, SET epsilon and SHOW), at about a microsecond a query, where
// the Engine takes tens of microseconds and an audit row per answer. Every
// attack is also tested through the Engine, in attacks/.
package attackmodel
