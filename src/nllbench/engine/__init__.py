"""The engine: multi-object densities, their transforms, and the NLL with its assignment
ranking (Murty); the trajectory NLL's weights and assignment sum.
"""

#: Old module names -> their names now (:mod:`nllbench._moved`): ``engine.trajectory`` held the
#: trajectory NLL, the name of three other modules.
MOVED = {"trajectory": "trajectory_nll"}
