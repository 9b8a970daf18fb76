function [col4row, row4col, gain] = kbest2dassign(C, k)
% KBEST2DASSIGN  The k lowest-cost assignments of a rectangular 2-D assignment problem (nllbench).
%
%   [col4row, row4col, gain] = kbest2dassign(C, k)
%
%   C : numRow x numCol costs, finite or +Inf (a forbidden pair); NaN and -Inf are refused.
%       Every row of the smaller side is assigned a distinct column (the problem is
%       transposed internally when numRow > numCol).
%   k : number of assignments wanted (>= 1).
%
%   col4row : numRow x n, the column of each row in each assignment (0: unassigned row)
%   row4col : numCol x n, the row of each column (0: unassigned column)
%   gain    : n x 1 costs in increasing order; n = min(k, number of feasible assignments).
%             No feasible assignment: col4row = [], row4col = [], gain = -1.
%
%   The calling convention of kBest2DAssign (D. F. Crouse, Tracker Component Library),
%   which the published trajectory PMBM code calls; this is nllbench's own implementation:
%   Murty's partitioning (K. G. Murty, "An algorithm for ranking all the assignments in
%   order of increasing cost", Operations Research 16(3), 1968) over a shortest augmenting
%   path (Hungarian / Jonker-Volgenant) solver, lap_sap below. Checked against
%   nllbench.engine.assignment.murty in tests/crosscheck/test_octave_kbest_assignment.py.
  if nargin < 2 || ~isscalar(k) || k < 1 || k ~= floor(k)
    error('kbest2dassign: k: expected an integer >= 1');
  end
  if any(isnan(C(:))) || any(C(:) == -Inf)
    error('kbest2dassign: C: expected finite values or +Inf, got NaN or -Inf');
  end
  [numRow, numCol] = size(C);
  flip = numRow > numCol;
  if flip
    C = C.';
    [numRow, numCol] = size(C);
  end
  col4row = zeros(numRow, 0);
  gain = zeros(0, 1);
  if numRow == 0
    col4row = zeros(0, 1); gain = 0;
  else
    % a node: the constrained cost matrix, its best assignment, its cost and optimal duals
    % a node: the constrained cost matrix, its best assignment and cost
    [a, c] = lap_sap(C);
    if isinf(c)
      col4row = []; row4col = []; gain = -1;
      return;
    end
    nodesC = {C}; nodesA = {a}; nodesCost = c;
    while numel(gain) < k && ~isempty(nodesCost)
      [~, t] = min(nodesCost);          % first of the ties: insertion order
      Ct = nodesC{t}; at = nodesA{t};
      nodesC(t) = []; nodesA(t) = []; nodesCost(t) = [];
      col4row(:, end + 1) = at(:);
      gain(end + 1, 1) = sum(C(sub2ind(size(C), 1:numRow, at(:)')));
      if numel(gain) == k
        break;
      end
      % Murty's partition of the node's solution space minus its best assignment
      Cp = Ct;
      for i = 1:numRow
        Cc = Cp;
        Cc(i, at(i)) = Inf;             % child i: row i not on its column
        if all(any(Cc < Inf, 2))        % else no assignment of every row exists
          [ac, cc] = lap_sap(Cc);
          if ~isinf(cc)
            nodesC{end + 1} = Cc; nodesA{end + 1} = ac; nodesCost(end + 1) = cc;
          end
        end
        % the next children keep row i on its column
        keep = Cp(i, at(i));
        Cp(i, :) = Inf; Cp(:, at(i)) = Inf; Cp(i, at(i)) = keep;
      end
    end
  end
  n = size(col4row, 2);
  row4col = zeros(numCol, n);
  for h = 1:n
    row4col(col4row(:, h), h) = (1:numRow)';
  end
  if flip
    [col4row, row4col] = deal(row4col, col4row);
  end
end

function [col4row, cost] = lap_sap(C)
% Minimum-cost assignment of every row (numRow <= numCol) by shortest augmenting paths with
% dual potentials (Kuhn-Munkres in the Jonker-Volgenant form), +Inf forbidden;
% cost = Inf when no assignment of every row exists.
  [n, m] = size(C);
  u = zeros(n, 1); v = zeros(1, m + 1);   % v(1): the virtual column 0
  p = zeros(1, m + 1);                    % p(j + 1): the row on column j (0: free)
  way = zeros(1, m + 1);
  Cext = [zeros(n, 1), C];
  for i = 1:n
    p(1) = i; j0 = 1;
    minv = Inf(1, m + 1); used = false(1, m + 1);
    while true
      used(j0) = true; i0 = p(j0);
      free = find(~used);
      cur = Cext(i0, free) - u(i0) - v(free);
      better = cur < minv(free);
      minv(free(better)) = cur(better);
      way(free(better)) = j0;
      [delta, t] = min(minv(free));
      if isempty(delta) || isinf(delta)
        col4row = zeros(n, 1); cost = Inf;
        return;
      end
      j1 = free(t);
      r = p(used);
      u(r) = u(r) + delta;
      v(used) = v(used) - delta;
      minv(free) = minv(free) - delta;
      j0 = j1;
      if p(j0) == 0
        break;
      end
    end
    while j0 ~= 1
      j1 = way(j0); p(j0) = p(j1); j0 = j1;
    end
  end
  col4row = zeros(n, 1);
  for j = 2:m + 1
    if p(j) > 0
      col4row(p(j)) = j - 1;
    end
  end
  cost = sum(C(sub2ind(size(C), (1:n)', col4row)));
end
