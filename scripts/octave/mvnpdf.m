function y = mvnpdf(x, mu, S)
% MVNPDF  Gaussian density N(x; mu, S) of one point (nllbench's own, for Octave without the
% statistics package): x and mu vectors of length d (row or column), S a d x d covariance.
  x = x(:); mu = mu(:); d = numel(x);
  [R, bad] = chol(S);
  if bad
    error('mvnpdf: S: expected a positive definite covariance');
  end
  w = R.' \ (x - mu);
  y = exp(-0.5 * (w.' * w) - sum(log(diag(R))) - 0.5 * d * log(2 * pi));
end
