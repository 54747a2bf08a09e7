package mechanisms

// The gaussian mechanism shares its code with laplace (laplace.go, dpCount):
// the same sensitivity (1 per record, the whole histogram at once), the same
// domain rule and integer answers, but Gaussian noise (rounded to integers) whose
// standard deviation is GaussianSigma(1, 1, epsilon, delta), the tight
// analytic calibration of Balle and Wang (2018) as Google's library computes
// it. For epsilon = 1, delta = 1e-5 that sigma is about 3.73; the classical
// bound sqrt(2 ln(1.25/delta))/epsilon of Dwork and Roth (A.1), 4.84, is
// looser. Each answer charges (epsilon, delta) to the analyst's dp budget;
// delta must be > 0 (SET delta).
