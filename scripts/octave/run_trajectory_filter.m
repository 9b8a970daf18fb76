function run_trajectory_filter(filter_name, P, z_t, out_path)
% RUN_TRAJECTORY_FILTER  nllbench's driver of the published trajectory PMBM / PMB filters.
%
%   run_trajectory_filter(filter_name, P, z_t, out_path)
%
%   Runs the step loop of TPMBM_all_filter.m ('tpmbm') or TPMB_all_filter.m ('tpmb') from
%   github.com/Agarciafernandez/MTT, folder "TPMBM filter" (which must be on the path, with
%   nllbench's kbest2dassign.m behind a kBest2DAssign shim and mvnpdf.m): per step the update,
%   for 'tpmb' the projection to one trajectory multi-Bernoulli, the estimate
%   (TPMBM_all_estimate1.m), the pruning and the prediction, on the given measurements
%   instead of the scenario's own draw. Nothing is computed here but the loop.
%
%   P : struct with the model (F, Q, H, R in the published state order (x, vx, y, vy)),
%       p_d, p_s, intensity_clutter, the initial Poisson (weights0, means0, covs0), the
%       birth (weights_b, means_b, covs_b) and the settings (gating_threshold, Nhyp_max,
%       T_pruning, T_pruningPois, existence_threshold, T_alive, Lscan, threshold).
%   z_t : 1 x K cell of 2 x m_k measurement matrices.
%   out_path : text file written with one row per estimated state,
%       'kind step index time x y': kind 0 rows are the estimate made at step `step` of the
%       states at that step (the online estimate), kind 1 rows the whole trajectories
%       `index` of the estimate made at the last step; times are 1-based steps.
  Nx = size(P.F, 1);
  K = numel(z_t);
  filter_pred = struct();
  filter_pred.Pois = cell(1, 0);
  for i = 1:numel(P.weights0)
    filter_pred.Pois{i}.weightPois = P.weights0(i);
    filter_pred.Pois{i}.meanPois = P.means0(:, i);
    filter_pred.Pois{i}.covPois = P.covs0(:, :, i);
    filter_pred.Pois{i}.t_bPois = 1;
    filter_pred.Pois{i}.length_Pois = 1;
  end
  filter_pred.tracks = cell(0, 1);
  filter_pred.globHyp = [];
  filter_pred.globHypWeight = [];
  fid = fopen(out_path, 'w');
  for k = 1:K
    z = z_t{k};
    filter_upd = TPMBM_all_update(filter_pred, z, P.H, P.R, P.p_d, k, P.gating_threshold, ...
                                  P.intensity_clutter, P.Nhyp_max, P.Lscan, P.T_alive);
    if strcmp(filter_name, 'tpmb')
      filter_upd = TPMB_all_projection(filter_upd, P.T_alive, Nx, k, P.Lscan);
    end
    [X, t_b, len] = TPMBM_all_estimate1(filter_upd, P.threshold, Nx);
    for i = 1:numel(X)
      if k >= t_b(i) && k <= t_b(i) + len(i) - 1
        s = (k - t_b(i)) * Nx;
        fprintf(fid, '0 %d %d %d %.17g %.17g\n', k, i, k, X{i}(s + 1), X{i}(s + 3));
      end
    end
    if k == K
      for i = 1:numel(X)
        for t = t_b(i):t_b(i) + len(i) - 1
          s = (t - t_b(i)) * Nx;
          fprintf(fid, '1 %d %d %d %.17g %.17g\n', k, i, t, X{i}(s + 1), X{i}(s + 3));
        end
      end
    end
    filter_upd = TPMBM_all_pruning(filter_upd, P.T_pruning, P.T_pruningPois, P.Nhyp_max, ...
                                   P.existence_threshold, P.T_alive);
    if k < K
      filter_pred = TPMBM_all_prediction(filter_upd, P.F, P.Q, P.p_s, P.weights_b, P.means_b, ...
                                         P.covs_b, P.Lscan, k, P.T_alive);
    end
  end
  fclose(fid);
end
