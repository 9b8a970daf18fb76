"""The engine: multi-object densities, their transforms, and the NLL with its assignment
ranking (Murty); the trajectory NLL's weights and assignment sum.
"""
