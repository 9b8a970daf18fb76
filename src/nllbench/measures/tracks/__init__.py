"""Trajectory measures of labelled estimates: trajectory GOSPA (its exact minimum in the private
package ``_tgospa``) and HOTA.
"""
